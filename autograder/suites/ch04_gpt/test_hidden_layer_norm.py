"""Hidden checks for section 4.2, layer normalization (12 points)."""
import pytest
import torch

from _gpt import KEEP, gradient_steps, judge_gradients, live_tensor, once, with_grads
from autograder.grading.compare import ATOL, expect_close, seeded, yours_vs_expected

SCALE_ZEROS = "LayerNorm's scale starting at zeros (torch.zeros): it starts at ones, so that it first keeps the normalised values"

points = pytest.mark.points
LN = "layer_norm.LayerNorm"
# (emb_dim, shape, scale, offset): 2-D to 4-D, large and small spreads (small: eps shows)
CASES = [(5, (2, 5), 1.0, 0.0), (12, (2, 3, 12), 3.0, 2.0), (8, (4, 8), 50.0, -10.0), (6, (3, 6), 0.01, 1.0),
         (16, (2, 2, 3, 16), 0.5, 0.0)]


def ln_model(x, scale, shift, *, unbiased=False, eps=1e-5, where="inside", dim=-1, root=True, affine="book",
             center=True):
    mean = x.mean(dim=dim, keepdim=True) if center else torch.zeros_like(x)
    var = x.var(dim=dim, keepdim=True, unbiased=unbiased)
    if not root:
        norm_x = (x - mean) / (var + eps)
    elif where == "inside":
        norm_x = (x - mean) / torch.sqrt(var + eps)
    elif where == "after":
        norm_x = (x - mean) / torch.sqrt(var) + eps
    else:
        norm_x = (x - mean) / (torch.sqrt(var) + eps)
    if affine == "swapped":
        return shift * norm_x + scale
    if affine == "none":
        return norm_x
    return scale * norm_x + shift


MISTAKES = {
    "the unbiased variance (Bessel's correction; the book uses var(..., unbiased=False))": dict(unbiased=True),
    "eps added outside the square root (divide by sqrt(var + eps))": dict(where="outside"),
    "eps added after the division, (x - mean) / sqrt(var) + eps (it goes inside the root: sqrt(var + eps))":
        dict(where="after"),
    "no eps in the square root": dict(eps=0.0),
    "eps of 1e-6 (the book's is 1e-5)": dict(eps=1e-6),
    "divided by the variance instead of its square root": dict(root=False),
    "scale and shift swapped (scale * norm_x + shift)": dict(affine="swapped"),
    "scale and shift not applied": dict(affine="none"),
    "the mean not subtracted (the book normalises x - mean)": dict(center=False),
}


def case(seeds, i, emb, shape, spread, offset):
    x = seeded(*shape, seed=seeds(f"x{i}"), scale=spread) + offset
    scale, shift = seeded(emb, seed=seeds(f"scale{i}")) * 0.5 + 1.0, seeded(emb, seed=seeds(f"shift{i}")) * 0.5
    return x, scale, shift


@points(5)
def test_layer_norm_forward(student, seeds):
    """LayerNorm normalises the last dimension (biased variance, eps 1e-5), then scale and shift"""
    steps, cases = [], []
    for i, (emb, shape, spread, offset) in enumerate(CASES):
        x, scale, shift = case(seeds, i, emb, shape, spread, offset)
        steps += [{"let": f"ln{i}", "call": LN, "args": [emb], "params_keep": KEEP, "params": {"scale": scale, "shift": shift}},
                  {"let": f"out{i}", "call": f"ln{i}", "args": [x], "return": True}]
        cases.append((x, scale, shift, f"LayerNorm({emb}) on input {shape} (values about {offset:g} +- {spread:g})"))
    plan = student.plan(steps, needs=LN)
    for i, (x, scale, shift, what) in enumerate(cases):
        mistakes = {name: (lambda c=change: ln_model(x, scale, shift, **c)) for name, change in MISTAKES.items()}
        if x.dim() == 2:
            mistakes["normalised over dim 0 (the batch) instead of the last dimension"] = \
                lambda: ln_model(x, scale, shift, dim=0)
        # float32 rounds x to about 1e-7 * |offset|; normalising divides that by the spread, so
        # a correct LayerNorm written another way (var_mean, ...) may differ by that much
        _, _, spread, offset = CASES[i]
        expect_close(plan.values[f"out{i}"], ln_model(x, scale, shift), what, mistakes,
                     atol=ATOL * max(1.0, abs(offset) / spread))


@points(2)
def test_layer_norm_eps_keeps_flat_rows_finite(student):
    """in float64: a row of variance 1e-5 gives +-1/sqrt(2); a constant row gives the shift, not NaN"""
    x = torch.tensor([[1.0, -1.0, 1.0, -1.0], [3.0, 3.0, 3.0, 3.0]], dtype=torch.float64)
    x[0] *= 1e-5 ** 0.5
    plan = student.plan([{"let": "ln", "call": LN, "args": [4]},
                         {"let": "ln64", "call": "ln.double"},
                         {"let": "out", "call": "ln64", "args": [x], "return": True}], needs=LN)
    ones, zeros = torch.ones(4, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)
    expected = ln_model(x, ones, zeros)
    expect_close(plan.values["out"], expected, "LayerNorm(4).double() on a row of variance 1e-5 and a constant row",
                 {name: (lambda c=change: ln_model(x, ones, zeros, **c)) for name, change in MISTAKES.items()},
                 atol=1e-9, rtol=1e-7)


@points(2)
def test_layer_norm_parameters(student):
    """exactly two parameters: scale (ones) and shift (zeros), each of shape (emb_dim,)"""
    plan = student.plan([{"let": "ln", "call": LN, "args": [7]},
                         {"let": "names", "grads": "ln", "return": True},
                         {"let": "scale", "attr": "ln.scale", "return": True},
                         {"let": "shift", "attr": "ln.shift", "return": True}], needs=LN)
    names = sorted(plan.values["names"])
    if names != ["scale", "shift"]:
        raise AssertionError("LayerNorm(7): " + yours_vs_expected(yours=names, yours_are="has parameters",
                                                                  expected="scale and shift (nn.Parameter)",
                                                                  expected_are="the book's are"))
    expect_close(plan.values["scale"], torch.ones(7), "LayerNorm(7).scale as built (ones)", {SCALE_ZEROS: torch.zeros(7)})
    expect_close(plan.values["shift"], torch.zeros(7), "LayerNorm(7).shift as built (zeros)")


@points(3)
def test_layer_norm_trainable(student, seeds):
    """scale and shift get the reference's gradients; the caller's input is left unchanged"""
    x, scale, shift = case(seeds, 0, 6, (2, 3, 6), 2.0, 1.0)
    g = seeded(2, 3, 6, seed=seeds("g"))

    def model(**change):
        return with_grads({"scale": scale, "shift": shift},
                          lambda w: ln_model(x, w["scale"], w["shift"], **change), g)
    # the book's gradients, or those of the mistake the output shows (each computed here)
    models = {None: lambda: once(("ch04 layer norm gradients", "scale and shift"), model),  # fixed inputs
              **{name: (lambda c=change: model(**c)) for name, change in MISTAKES.items()}}
    plan = student.plan([{"let": "ln", "call": LN, "args": [6], "params_keep": KEEP, "params": {"scale": scale, "shift": shift}},
                         live_tensor("x", "ln.scale", x), *gradient_steps("ln", "x", g)], needs=LN)
    judge_gradients(plan, "x", x, ("scale", "shift"), models,
                    in_place="LayerNorm(6) changed the caller's input in place: forward must leave x as it was",
                    no_gradient="LayerNorm(6).{} received no gradient: it must be an nn.Parameter used in forward",
                    what="LayerNorm(6) on input (2, 3, 6)", gradient_of="gradient of LayerNorm(6).{} after backward")
