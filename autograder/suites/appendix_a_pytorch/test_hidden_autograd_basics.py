"""Hidden checks for sections A.3-A.4: a logistic regression unit and its gradients (20 points).

Inputs of the grader's shapes (several examples, not only the book's one); every prediction, loss
and gradient is computed here with torch."""
import pytest
import torch
import torch.nn.functional as F

from _basics import leaf_steps, logistic_grads
from autograder.grading.compare import check_calls, expect_close, seeded, value, yours_vs_expected
from autograder.grading.kit import Case

points = pytest.mark.points
MODULE = "autograd_basics"
SIZES = (1, 4, 7)
NO_RETAIN = "retain_graph=True missing in the first torch.autograd.grad (the graph is freed after it)"


def inputs(n, seeds, k):
    """(x1, w1, b, y): n examples, one bias, labels 0 or 1 (the book's are [1.1], [2.2], [0.0], [1.0])."""
    x1, w1 = seeded(n, seed=seeds(f"x{k}")), seeded(n, seed=seeds(f"w{k}"))
    b = seeded(1, seed=seeds(f"b{k}"))
    y = (seeded(n, seed=seeds(f"y{k}")) > 0).float()
    return x1, w1, b, y


@points(5)
def test_logistic_forward(student, seeds):
    """logistic_forward: sigmoid(x1 * w1 + b)"""
    cases = []
    for k, n in enumerate(SIZES):
        x1, w1, b, _ = inputs(n, seeds, k)
        z = x1 * w1 + b
        cases.append(Case((x1, w1, b), torch.sigmoid(z), f"logistic_forward(x1, w1, b) for {n} examples", {
            "no sigmoid (the output is z = x1 * w1 + b)": z, "the bias left out": torch.sigmoid(x1 * w1)}))
    check_calls(student, MODULE, "logistic_forward", cases)


@points(5)
def test_logistic_loss(student, seeds):
    """logistic_loss: F.binary_cross_entropy(a, y), the mean over the examples"""
    cases = []
    for k, n in enumerate(SIZES):
        x1, w1, b, y = inputs(n, seeds, k)
        a = torch.sigmoid(x1 * w1 + b)
        cases.append(Case((a, y), F.binary_cross_entropy(a, y), f"logistic_loss(a, y) for {n} examples", {
            "the sum over the examples instead of the mean": F.binary_cross_entropy(a, y, reduction="sum"),
            "the arguments swapped (binary_cross_entropy takes the predictions first)": F.binary_cross_entropy(y, a)}))
    check_calls(student, MODULE, "logistic_loss", cases)


def grads_plan(student, name, seeds):
    """``name(x1, w1, b, y)`` in the child on leaf tensors w1 and b; (plan, [(inputs, what)])."""
    steps, cases = [], []
    for k, n in enumerate(SIZES):
        x1, w1, b, y = inputs(n, seeds, k)
        steps += [*leaf_steps(f"w{k}", w1), *leaf_steps(f"b{k}", b),
                  {"let": f"g{k}", "call": f"{MODULE}.{name}", "args": [x1, {"$ref": f"w{k}"}, {"$ref": f"b{k}"}, y],
                   "grad": True, "return": True}]
        cases.append(((x1, w1, b, y), f"{name}(x1, w1, b, y) for {n} examples (w1 and b leaf tensors that require grad)"))
    return student.plan(steps, needs=f"{MODULE}.{name}"), cases


def judge(plan, cases, mistakes):
    for k, (args, what) in enumerate(cases):
        got = value(plan, f"g{k}", what, [(r"backward through the graph a second time", NO_RETAIN)])
        if not (isinstance(got, list) and len(got) == 2):
            raise AssertionError(f"{what}: " + yours_vs_expected(
                yours=repr(got)[:100], yours_are="returned", expected="two tensors (the gradients of w1 and of b)"))
        want = logistic_grads(*args)
        for j, label in enumerate(("the gradient of w1", "the gradient of b")):
            named = {name: (lambda v=variant, j=j: logistic_grads(*args, v)[j]) for name, variant in mistakes.items()}
            if want[0].shape == want[1].shape:
                named["the two gradients swapped (w1's first, then b's)"] = want[1 - j]
            expect_close(got[j], want[j], f"{label} from {what}", named)


MISTAKES = {"the bias left out": "no_bias"}


@points(5)
def test_grads_with_autograd(student, seeds):
    """grads_with_autograd: (grad_L_w1, grad_L_b) of the book's loss"""
    judge(*grads_plan(student, "grads_with_autograd", seeds), MISTAKES)


@points(5)
def test_grads_with_backward(student, seeds):
    """grads_with_backward: (w1.grad, b.grad) after one loss.backward()"""
    judge(*grads_plan(student, "grads_with_backward", seeds),
          {**MISTAKES, "two backward passes (the gradients added up twice)": "twice"})
