"""Hidden checks of rotary position embeddings (15 points).

compute_rope_params and apply_rope are judged as values (apply_rope on the reference's cos and
sin, so a mistake in compute_rope_params costs nothing there), then by the two properties that
make RoPE what it is, computed here from what the student's apply_rope returned: lengths are
kept, and a query-key score depends only on how far apart the two tokens are; apply_rope keeps
x's dtype. The attention class is judged against the reference on seeded weights, in eval and in
training mode (the reference's dropout draws after the same seed), and its buffers by name and
size (the cos and sin tables: context_length rows)."""
import pytest
import torch

from _efficient import (attention, build_and_run, ch03_params, expect_buffers, loaded, mistakes, rope_apply,
                        rope_params, run, weights)
from autograder.grading.compare import expect_close, seeded, yours_vs_expected
from autograder.grading.diagnose import Projection
from autograder.grading.kit import Case, once
from autograder.grading.result import failure

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
    if not why or not any(f"raised {error}" in why for error in ("ValueError", "AssertionError")):
        raise AssertionError(f"compute_rope_params(head_dim=7) must raise ValueError, or AssertionError as the book's "
                             f"assert does (RoPE turns pairs of coordinates): {why or 'it returned a value'}")
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


@points(3)
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


LEFT_FLOAT32 = ("the result left in float32 (cos and sin are float32, so x * cos is float32 for a bfloat16 x: "
                "return it .to(x.dtype), as the book does)")


@points(1)
def test_apply_rope_keeps_the_dtype(student, ref, seeds):
    """apply_rope on a bfloat16 or float64 x (cos and sin float32) returns x's dtype"""
    cos, sin = once(("efficient rope params", 8, 10_000, 16), lambda: ref.rope.compute_rope_params(8, 10_000, 16))
    cases = [(seeded(2, 3, 5, 8, seed=seeds("x0"), scale=2.0).to(torch.bfloat16), 3),
             (seeded(1, 2, 4, 8, seed=seeds("x1"), dtype=torch.float64), 6)]
    plan = student.plan([{"let": f"r{i}", "call": "rope.apply_rope", "args": [x, cos, sin], "kwargs": {"offset": o},
                          "return": True} for i, (x, o) in enumerate(cases)], needs="rope.apply_rope")
    for i, (x, offset) in enumerate(cases):
        got = plan.values[f"r{i}"]
        want = ref.rope.apply_rope(x, cos, sin, offset)
        # the values are apply_rope's own check; here a low-precision x may be rounded at any step
        found = {LEFT_FLOAT32: Projection(lambda a, x=x, o=offset: ref.rope.apply_rope(x.float(), cos, sin, o)
                                          if isinstance(a, torch.Tensor) and a.dtype == torch.float32 else None)}
        found.update({name: (lambda x=x, o=offset, v=v: rope_apply(x, cos, sin, o, v).to(x.dtype))
                      for name, v in APPLY_MISTAKES.items()})
        expect_close(got, want, f"apply_rope(x of shape {tuple(x.shape)} and dtype {x.dtype}, cos, sin (float32), "
                     f"offset={offset})", found, atol=3e-2, rtol=3e-2)


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


# (d_in, d_out, num_heads, context_length, dropout, qkv_bias, theta_base), (batch, num_tokens), train
ROPE_CASES = [((6, 8, 2, 10, 0.0, False, 10_000), (2, 9), False), ((8, 12, 3, 8, 0.0, True, 500), (1, 8), False),
              ((6, 8, 2, 10, 0.5, True, 10_000), (2, 7), False), ((8, 12, 3, 9, 0.5, False, 500), (2, 6), True)]


def describe(args, x, train=False):
    d_in, d_out, heads, ctx, drop, qkv_bias, theta = args
    return (f"MultiHeadAttentionRoPE(d_in={d_in}, d_out={d_out}, num_heads={heads}, context_length={ctx}, "
            f"dropout={drop}, qkv_bias={qkv_bias}, theta_base={theta}) in {'training' if train else 'eval'} mode "
            f"on input {tuple(x.shape)}")


@points(2)
def test_rope_attention(student, ref, seeds):
    """MultiHeadAttentionRoPE: chapter 3's attention, queries and keys rotated after the heads split; dropout in training"""
    steps, expected = [], []
    for i, (args, (b, n), train) in enumerate(ROPE_CASES):
        d_in, d_out, heads, ctx, drop, qkv_bias, theta = args
        W = weights(d_in, d_out, qkv_bias, seed=seeds(f"W{i}"))
        module = loaded(ref.rope.MultiHeadAttentionRoPE, args, ch03_params(W), train=train)
        x = seeded(b, n, d_in, seed=seeds(f"x{i}"), scale=2.0)
        steps += build_and_run(f"m{i}", "rope.MultiHeadAttentionRoPE", list(args), ch03_params(W), x, train=train,
                               seed=7)
        cos, sin = ref.rope.compute_rope_params(d_out // heads, theta, ctx)
        rope = (lambda t, cos=cos, sin=sin: rope_apply(t, cos, sin))
        if train:  # the reference's draws after the seed; without them, eval mode's answer
            found = {"no dropout on the attention weights in training mode":
                     lambda x=x, W=W, h=heads, rope=rope: attention(x, W, h, rope=rope)}
        else:
            names = dict(ATT_MISTAKES)
            if drop:
                names["dropout applied in eval mode too (nn.Dropout follows .eval())"] = "dropout in eval"
            found = mistakes(x, W, heads, names, drop=drop, seed=7, rope=rope)
            found["no RoPE (chapter 3's attention)"] = lambda x=x, W=W, h=heads: mistakes(x, W, h, {"": "book"})[""]()
        expected.append((x, run(module, x, seed=7), found, args, train))
    plan = student.plan(steps, needs="rope.MultiHeadAttentionRoPE")
    for i, (x, want, found, args, train) in enumerate(expected):
        expect_close(plan.values[f"m{i}_out"], want, describe(args, x, train)
                     + (" after torch.manual_seed(7)" if train else ""), found)


FULL_TABLES = ("cos and sin of the default 4096 rows (compute_rope_params(head_dim, theta_base, context_length): "
               "context_length rows, all a sequence can use)")


@points(1)
def test_rope_attention_buffers(student, ref, seeds):
    """the causal mask, cos and sin are buffers; cos and sin hold context_length rows of head_dim values"""
    steps, cases = [], []
    for i, (args, _, _) in enumerate(ROPE_CASES[:2]):
        d_in, d_out, heads, ctx, drop, qkv_bias, theta = args
        steps += [{"let": f"m{i}", "call": "rope.MultiHeadAttentionRoPE", "args": list(args)},
                  {"let": f"m{i}_buffers_gen", "call": f"m{i}.named_buffers"},
                  {"let": f"m{i}_buffers", "iterate": f"m{i}_buffers_gen", "return": True}]
        cases.append(args)
    plan = student.plan(steps, needs="rope.MultiHeadAttentionRoPE")
    for i, args in enumerate(cases):
        d_in, d_out, heads, ctx, drop, qkv_bias, theta = args
        what = (f"MultiHeadAttentionRoPE(d_in={d_in}, d_out={d_out}, num_heads={heads}, context_length={ctx}, "
                f"theta_base={theta})")
        expect_buffers(plan, f"m{i}", ["mask", "cos", "sin"], what)
        buffers = {pair[0]: pair[1] for pair in plan.values[f"m{i}_buffers"] if isinstance(pair, list) and len(pair) == 2}
        for name in ("cos", "sin"):
            shape = tuple(getattr(buffers[name], "shape", ()))
            if shape != (ctx, d_out // heads):
                raise failure(f"{what}: its {name} buffer: " + yours_vs_expected(
                    yours=shape, yours_are="shape", expected=(ctx, d_out // heads),
                    expected_are="expected (context_length, head_dim)") + ".",
                    FULL_TABLES if shape == (4096, d_out // heads) else None)
