"""Hidden checks for section 4.3, GELU and the feed forward network (12 points)."""
import pytest
import torch
import torch.nn.functional as F

from _gpt import GELU_MISTAKES, KEEP, CFGS, built, gradient_steps, judge_gradients, gelu, live_tensor, params, run, with_grads
from autograder.grading.compare import expect_close, seeded, set_seed, yours_vs_expected
from autograder.grading.kit import Case, once
from autograder.grading.result import failure

points = pytest.mark.points
FF = "feed_forward.FeedForward"


@points(2)
def test_gelu(student, seeds):
    """GELU is the tanh approximation, element by element, on any shape"""
    inputs = [torch.linspace(-6, 6, 61), seeded(2, 3, 5, seed=seeds("x"), scale=2.0)]
    steps = [{"let": "g", "call": "feed_forward.GELU"}]
    steps += [{"let": f"y{i}", "call": "g", "args": [x], "return": True} for i, x in enumerate(inputs)]
    plan = student.plan(steps, needs="feed_forward.GELU")
    for i, x in enumerate(inputs):
        expect_close(plan.values[f"y{i}"], gelu(x), f"GELU() on input {tuple(x.shape)}",
                     {name: (lambda f=f: f(x)) for name, f in GELU_MISTAKES.items()})


@points(1)
def test_gelu_on_any_shape(student, seeds):
    """GELU element by element on a 4-D input (any shape, as the docstring says)"""
    x = seeded(2, 1, 3, 4, seed=seeds("x"), scale=3.0)
    case = Case((x,), once(("ch04 gelu", x.numpy().tobytes()), lambda: gelu(x)), "GELU() on a 4-D input (2, 1, 3, 4)",
                {name: (lambda f=f: f(x)) for name, f in GELU_MISTAKES.items()})
    plan = student.plan([{"let": "g", "call": "feed_forward.GELU"},
                         {"let": "y", "call": "g", "args": list(case.args), "return": True}], needs="feed_forward.GELU")
    expect_close(plan.values["y"], case.expected, case.what, case.mistakes)


def ff_model(x, state, act):
    h = act(F.linear(x, state["layers.0.weight"], state["layers.0.bias"]))
    return F.linear(h, state["layers.2.weight"], state["layers.2.bias"])


@points(4)
def test_feed_forward_forward(student, ref, seeds):
    """FeedForward: Linear(emb_dim, 4 emb_dim), GELU, Linear(4 emb_dim, emb_dim) on 2-D and 3-D inputs"""
    steps, cases = [], []
    for i, (cfg, shape) in enumerate([(CFGS[0], (2, 5, 12)), (CFGS[1], (3, 8)), (CFGS[2], (1, 4, 16))]):
        state = params(built(ref.feed_forward.FeedForward, cfg, seeds(f"module{i}")))
        x = seeded(*shape, seed=seeds(f"x{i}"))
        steps += [{"let": f"ff{i}", "call": FF, "args": [cfg], "params_keep": KEEP, "params": state},
                  {"let": f"out{i}", "call": f"ff{i}", "args": [x], "return": True}]
        cases.append((x, state, f"FeedForward(emb_dim={cfg['emb_dim']}) on input {shape}"))
    plan = student.plan(steps, needs=FF)
    for i, (x, state, what) in enumerate(cases):
        mistakes = {name.replace("GELU", "GELU in FeedForward", 1) if name.startswith("GELU") else name:
                    (lambda f=f: ff_model(x, state, f)) for name, f in GELU_MISTAKES.items()}
        mistakes["no activation between the two linear layers"] = lambda: ff_model(x, state, lambda t: t)
        expect_close(plan.values[f"out{i}"], ff_model(x, state, gelu), what, mistakes)


@points(3)
def test_feed_forward_seeded_init(student, ref):
    """self.layers holds the two linear layers (layers.0 and layers.2), created in order after a seed"""
    cfg = CFGS[0]
    plan = student.plan([{"let": "ff", "call": FF, "args": [cfg], "seed": 123},
                         {"let": "gen", "call": "ff.named_parameters"},
                         {"let": "state", "iterate": "gen", "return": True}], needs=FF)
    mine = dict(plan.values["state"])
    expected = params(built(ref.feed_forward.FeedForward, cfg, 123))
    if sorted(mine) != sorted(expected):
        raise AssertionError("FeedForward: " + yours_vs_expected(
            yours=sorted(mine), yours_are="has parameters", expected=sorted(expected), expected_are="the book's are")
            + " (self.layers = nn.Sequential(nn.Linear, GELU(), nn.Linear))")
    if all(mine[k].shape == v.shape and torch.equal(mine[k], v) for k, v in expected.items()):
        return
    set_seed(123)
    second = torch.nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"])
    first = torch.nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"])
    swapped = torch.equal(mine["layers.0.weight"], first.weight) and torch.equal(mine["layers.2.weight"], second.weight)
    raise failure("FeedForward's weights after torch.manual_seed(123) differ from the book's draw (the book "
                  "creates Linear(emb_dim, 4 * emb_dim), then Linear(4 * emb_dim, emb_dim)).",
                  "the second linear layer created before the first" if swapped else None)


@points(2)
def test_feed_forward_trainable(student, ref, seeds):
    """every weight gets the reference's gradient; the caller's input is left unchanged"""
    cfg = CFGS[1]
    module = built(ref.feed_forward.FeedForward, cfg, seeds("module"))
    x, g = seeded(2, 4, 8, seed=seeds("x")), seeded(2, 4, 8, seed=seeds("g"))
    # the book's gradients, or those of the mistake the output shows (each computed here)
    models = {None: lambda: run(module, x, grad_weight=g),
              **{name: (lambda f=f: with_grads(params(module), lambda w: ff_model(x, w, f), g))
                 for name, f in {**GELU_MISTAKES, "no activation": lambda t: t}.items()}}
    plan = student.plan([{"let": "ff", "call": FF, "args": [cfg], "params_keep": KEEP, "params": params(module)},
                         live_tensor("x", "ff.layers.0.weight", x), *gradient_steps("ff", "x", g)], needs=FF)
    judge_gradients(plan, "x", x, params(module), models,
                    in_place="FeedForward changed the caller's input in place: forward must leave x as it was",
                    no_gradient="FeedForward: {} received no gradient from backward",
                    what="FeedForward(emb_dim=8) on input (2, 4, 8)", gradient_of="gradient of FeedForward's {}")
