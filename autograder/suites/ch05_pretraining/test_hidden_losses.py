"""Hidden checks for sections 5.1.2-5.1.3: the loss of a batch and of a loader, perplexity (20 points).

Every loss is the loss of the grader's stand-in GPT (stand_ins.TinyGPT, the grader's weights) on the
grader's batches, computed here as well: the student's chapter-4 GPT is not used."""
import math

import pytest
import torch

from _pretraining import (LOADER_MISTAKES, LOSS_MISTAKES, as_loader, batch_loss, loader_loss, per_batch_losses, tiny,
                          tiny_step, tiny_weights, token_batches, verdict_batches)
from autograder.grading.compare import expect_close, value, yours_vs_expected
from autograder.grading.result import failure

points = pytest.mark.points
CFGS = [{"vocab_size": 11, "context_length": 6, "emb_dim": 4, "drop_rate": 0.0},
        {"vocab_size": 29, "context_length": 9, "emb_dim": 8, "drop_rate": 0.0}]
VERDICT = {"vocab_size": 50257, "context_length": 8, "emb_dim": 2, "drop_rate": 0.0}  # The Verdict's real ids
EMPTY_ZERO = "an empty loader answered 0 (the book returns float('nan'): no batch, no mean)"
NOT_A_TENSOR = ("the loss returned as a Python number (loss.item()): return the tensor, so that training can call "
                "backward() on it")


@points(8)
def test_calc_loss_batch(student, seeds):
    """calc_loss_batch: the mean cross entropy of the flattened logits and targets, a tensor gradients flow through"""
    for i, cfg in enumerate(CFGS):
        weights = tiny_weights(cfg, seeds(f"model{i}"))
        x, y = token_batches(1, 2 + i, cfg["context_length"] - 1 - i, cfg["vocab_size"], seeds(f"batch{i}"))[0]
        model = tiny(cfg, weights)
        with torch.enable_grad():
            expected = batch_loss(model(x), y)
            expected.backward()
        grads = {k: v.grad for k, v in model.named_parameters()}
        plan = student.plan([tiny_step("m", cfg, weights),
                             {"let": "loss", "call": "losses.calc_loss_batch", "args": [x, y, {"$ref": "m"}, "cpu"],
                              "grad": True, "return": True},
                             {"let": "back", "backward": "loss", "what": "loss.backward()"},
                             {"let": "grads", "grads": "m", "return": True}], needs="losses.calc_loss_batch")
        what = f"calc_loss_batch(input {tuple(x.shape)}, target {tuple(y.shape)}, model with vocab {cfg['vocab_size']})"
        loss = value(plan, "loss", what)
        if not isinstance(loss, torch.Tensor):
            if isinstance(loss, float) and math.isclose(loss, expected.item(), rel_tol=1e-4):
                raise failure(f"{what}: returned the float {loss:.4f}.", NOT_A_TENSOR)
            raise AssertionError(f"{what}: " + yours_vs_expected(yours=type(loss).__name__, yours_are="returned",
                                                                  expected="a scalar tensor"))
        logits = model(x).detach()
        expect_close(loss, expected.detach(), what,
                     {name: (lambda v=variant: batch_loss(logits, y, v)) for name, variant in LOSS_MISTAKES.items()})
        got = value(plan, "grads", f"{what}.backward()")
        for name, grad in grads.items():
            expect_close(got.get(name), grad, f"the gradient of {name} after {what}.backward()")


@points(8)
def test_calc_loss_loader(student, seeds):
    """calc_loss_loader: the mean batch loss over the first num_batches batches (all where None or more), a float"""
    cases = []
    for i, cfg in enumerate(CFGS):
        pairs = token_batches(4 + i, 2, cfg["context_length"] - 1, cfg["vocab_size"], seeds(f"batches{i}"))
        cases += [(cfg, seeds(f"model{i}"), pairs, nb) for nb in (None, 2, 3 + 4)]
    cases.append((VERDICT, seeds("verdict"), verdict_batches(3, 2, VERDICT["context_length"]), 2))
    steps = []
    for j, (cfg, seed, pairs, nb) in enumerate(cases):
        steps += [tiny_step(f"m{j}", cfg, tiny_weights(cfg, seed)),
                  {"let": f"l{j}", "call": "losses.calc_loss_loader", "args": [as_loader(pairs), {"$ref": f"m{j}"}, "cpu"],
                   "kwargs": {"num_batches": nb}, "return": True}]
    plan = student.plan(steps, needs="losses.calc_loss_loader")
    for j, (cfg, seed, pairs, nb) in enumerate(cases):
        each = per_batch_losses(tiny(cfg, tiny_weights(cfg, seed)), pairs)
        what = (f"calc_loss_loader({len(pairs)} batches{' of The Verdict' if cfg is VERDICT else ''}, model, "
                f"num_batches={nb})")
        got = value(plan, f"l{j}", what)
        if isinstance(got, torch.Tensor) and got.dim() == 0:
            got = got.item()
        if type(got) is not float:
            raise AssertionError(f"{what}: " + yours_vs_expected(yours=type(got).__name__, yours_are="returned",
                                                                  expected="a Python float (total_loss / num_batches)"))
        expect_close(torch.tensor(got, dtype=torch.float64), torch.tensor(loader_loss(each, nb), dtype=torch.float64),
                     what, {name: torch.tensor(loader_loss(each, nb, v), dtype=torch.float64)
                            for name, v in LOADER_MISTAKES.items()})


@points(2)
def test_calc_loss_loader_of_an_empty_loader(student, seeds):
    """calc_loss_loader of an empty loader is float('nan'), as the book's"""
    cfg = CFGS[0]
    plan = student.plan([tiny_step("m", cfg, tiny_weights(cfg, seeds("model"))),
                         {"let": "l", "call": "losses.calc_loss_loader", "args": [[], {"$ref": "m"}, "cpu"],
                          "return": True}], needs="losses.calc_loss_loader")
    got = value(plan, "l", "calc_loss_loader(an empty loader, model)")
    if not (type(got) is float and math.isnan(got)):
        raise failure("calc_loss_loader(an empty loader, model): " + yours_vs_expected(
            yours=repr(got)[:80], yours_are="returned", expected="float('nan')") + ".",
            EMPTY_ZERO if type(got) in (int, float) and got == 0 else None)


@points(2)
def test_perplexity(student):
    """perplexity(loss) is exp(loss), as a tensor"""
    losses = [torch.tensor(10.7940), torch.tensor(0.5), torch.tensor(3.25)]
    plan = student.plan([{"let": f"p{i}", "call": "losses.perplexity", "args": [loss], "return": True}
                         for i, loss in enumerate(losses)], needs="losses.perplexity")
    for i, loss in enumerate(losses):
        expect_close(value(plan, f"p{i}", f"perplexity(tensor({loss.item():g}))"), torch.exp(loss),
                     f"perplexity(tensor({loss.item():g}))", {"log instead of exp": torch.log(loss),
                                                              "2 ** loss instead of exp(loss)": 2 ** loss})
