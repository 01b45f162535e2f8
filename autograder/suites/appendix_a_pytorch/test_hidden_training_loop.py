"""Hidden checks for section A.7: the training loop and the accuracy (25 points).

Both run on the grader's stand-in network (basics_stand_ins.StandInNetwork, with dropout) and the
grader's batches: train_model with an SGD optimizer built in the child from the grader's settings,
its weights after training compared with the same loop run here after the same seed (dropout draws
the same masks); compute_accuracy against the accuracy counted here, in eval mode."""
import pytest

from _basics import TRAINING_MISTAKES, accuracy, as_loader, batches, network_weights, stand_in, stand_in_step, train
from autograder.grading.compare import expect_close, value, yours_vs_expected
from autograder.grading.result import failure

points = pytest.mark.points
MODULE = "training_loop"
LR = 0.3


@points(15)
def test_train_model(student, seeds):
    """train_model: each batch forward, cross_entropy on the logits, zero_grad, backward, step, in training mode"""
    cases = [("a", (3, 8, 3, 0.3), (4, 4, 2), 2), ("b", (5, 6, 2, 0.5), (3, 3), 3)]
    for name, sizes, batch_sizes, num_epochs in cases:
        weights = network_weights(*sizes[:3], seeds(f"{name}w"))
        pairs = batches(batch_sizes, sizes[0], sizes[2], seeds(f"{name}data"))
        seed = seeds(f"{name}dropout")
        plan = student.plan([stand_in_step("m", sizes, weights), {"let": "p", "call": "m.parameters"},
                             {"let": "opt", "call": "basics_stand_ins.torch.optim.SGD", "args": [{"$ref": "p"}],
                              "kwargs": {"lr": LR}, "what": "torch.optim.SGD"},
                             {"let": "out", "call": f"{MODULE}.train_model",
                              "args": [{"$ref": "m"}, as_loader(pairs), {"$ref": "opt"}, num_epochs],
                              "grad": True, "seed": seed},
                             {"let": "after", "parameters": "m", "return": True}], needs=f"{MODULE}.train_model")
        what = (f"train_model(the grader's network with dropout {sizes[3]}, {len(pairs)} batches, SGD lr={LR}, "
                f"num_epochs={num_epochs})")
        if plan.failed("out") is not None:
            value(plan, "out", what)
        got = value(plan, "after", f"the weights after {what}")
        want = train(sizes, weights, pairs, num_epochs, LR, seed)
        for param in ("layers.0.weight", "layers.3.weight", "layers.3.bias"):
            expect_close(got.get(param), want[param], f"{param} after {what}",
                         {n: (lambda s=s, p=param: train(sizes, weights, pairs, num_epochs, LR, seed, **s)[p])
                          for n, s in TRAINING_MISTAKES.items()}, atol=1e-5, rtol=1e-4)


@points(10)
def test_compute_accuracy(student, seeds):
    """compute_accuracy: correct predictions over all examples, in eval mode, batches of uneven size"""
    cases = [("a", (4, 16, 3, 0.5), (4, 4, 3)), ("b", (2, 12, 2, 0.5), (5, 2)), ("c", (6, 10, 4, 0.5), (3, 3, 3, 1))]
    steps = []
    for name, sizes, batch_sizes in cases:
        steps += [stand_in_step(f"m{name}", sizes, network_weights(*sizes[:3], seeds(f"{name}w")), train=True),
                  {"let": f"acc{name}", "call": f"{MODULE}.compute_accuracy",
                   "args": [{"$ref": f"m{name}"}, as_loader(batches(batch_sizes, sizes[0], sizes[2], seeds(f"{name}data")))],
                   "seed": seeds(f"{name}dropout"), "return": True}]
    plan = student.plan(steps, needs=f"{MODULE}.compute_accuracy")
    for name, sizes, batch_sizes in cases:
        pairs = batches(batch_sizes, sizes[0], sizes[2], seeds(f"{name}data"))
        model, seed = stand_in(sizes, network_weights(*sizes[:3], seeds(f"{name}w"))), seeds(f"{name}dropout")
        want = accuracy(model, pairs, seed)
        what = (f"compute_accuracy(the grader's network with dropout {sizes[3]} in training mode, batches of "
                f"{', '.join(map(str, batch_sizes))})")
        got = value(plan, f"acc{name}", what)
        if not (isinstance(got, (int, float)) and abs(got - want) < 1e-6):
            named = {"the mean of the batches' accuracies (count the examples: the last batch is smaller)":
                     accuracy(model, pairs, seed, per_batch=True),
                     "the model not put in eval mode (model.eval(): dropout is on in training mode)":
                     accuracy(model, pairs, seed, eval_mode=False)}
            raise failure(f"{what}: " + yours_vs_expected(yours=repr(got)[:60], expected=f"{want:.4f}") + ".",
                          next((n for n, v in named.items() if isinstance(got, (int, float)) and abs(got - v) < 1e-6),
                               None))
