"""Hidden checks for section 5.2: training the LLM (30 points).

train_model_simple trains the grader's stand-in GPT (stand_ins.TinyGPT, with dropout) in the child,
with the grader's AdamW; the weights after every step and the three lists it returns are compared
with the same training run here, after the same seed (dropout draws the same masks). Every piece
these functions call from another part is the grader's stand-in, in the child and here
(stand_ins.STAND_INS: its own loss for calc_loss_batch and calc_loss_loader, greedy generation for
chapter 4's generate_text_simple, tiktoken's own encode and decode for text_to_token_ids and
token_ids_to_text): a mistake in losses.py, generate.py or text_tokens.py, named or not, costs
nothing in this part."""
import pytest
import torch

from _pretraining import (TOKENS_MISTAKES, TRAINING_MISTAKES, as_loader, gpt2, ran, tiny, tiny_step,
                          tiny_weights, token_batches, tokenizer_step, train)
from autograder.grading.compare import expect_close, set_seed, value, yours_vs_expected
from autograder.grading.result import failure
from autograder.support.stand_ins import STAND_INS, stand_in_generate, stand_in_loss_loader

points = pytest.mark.points
# vocabulary below 40: the sample after each epoch starts from "A" (GPT-2 id 32) and stays in it
CFG = {"vocab_size": 40, "context_length": 6, "emb_dim": 8, "drop_rate": 0.3}
SETTINGS = {"lr": 0.02, "weight_decay": 0.1}
NOT_TRAIN_AFTER = ("the model left in eval mode ({fn} must end with model.train(): training goes on with "
                   "dropout)")


def run(student, seeds, name, num_epochs, eval_freq, eval_iter, batches=(3, 2)):
    """train_model_simple in the child: (the child's plan, the grader's model, the case's data)."""
    weights = tiny_weights(CFG, seeds(f"{name}model"))
    train_pairs = token_batches(batches[0], 2, 5, CFG["vocab_size"], seeds(f"{name}train"))
    val_pairs = token_batches(batches[1], 2, 5, CFG["vocab_size"], seeds(f"{name}val"))
    seed = seeds(f"{name}dropout")
    args = [{"$ref": "m"}, as_loader(train_pairs), as_loader(val_pairs), {"$ref": "opt"}, "cpu", num_epochs,
            eval_freq, eval_iter, "A", {"$ref": "tk"}]
    plan = student.plan([tokenizer_step("text_tokens"), tiny_step("m", CFG, weights, train=True),
                         {"let": "opt", "call": "stand_ins.adamw", "args": [{"$ref": "m"}], "kwargs": SETTINGS,
                          "what": "torch.optim.AdamW (the grader's)"},
                         {"let": "out", "call": "training.train_model_simple", "args": args, "grad": True,
                          "seed": seed, "return": True, "replace": STAND_INS},
                         {"let": "after", "parameters": "m", "return": True}], needs="training.train_model_simple")
    case = dict(train_pairs=train_pairs, val_pairs=val_pairs, num_epochs=num_epochs, eval_freq=eval_freq,
                eval_iter=eval_iter, seed=seed, **SETTINGS)
    return plan, tiny(CFG, weights), case


def expected(model, case, **switches):
    return train(model, **case, **switches)


INLINE = ("train_model_simple computes each batch's loss itself, the book's cross-entropy, instead of calling "
          "calc_loss_batch: its training is right, and judged as such (through calc_loss_batch, a mistake in "
          "losses.py would be charged in losses only).")


def style(student, after, model, case):
    """The switches of the training the child's weights ``after`` show where it is a correct style
    other than the book's: ({"inline": True}, with a note) where each step's loss is the book's
    cross-entropy computed inline; else {} (the book's, or a mistake)."""
    got = after.get("out_head.weight") if isinstance(after, dict) else None
    if not isinstance(got, torch.Tensor) or torch.allclose(got, expected(model, case)[1]["out_head.weight"],
                                                           atol=1e-5, rtol=1e-4):
        return {}
    inline = expected(model, case, inline=True)[1]
    if all(isinstance(after.get(k), torch.Tensor) and after[k].shape == v.shape
           and torch.allclose(after[k], v, atol=1e-5, rtol=1e-4) for k, v in inline.items()):
        if INLINE not in student.notes:
            student.notes.append(INLINE)
        return {"inline": True}
    return {}


CASES = [("a", 2, 2, 1), ("b", 1, 1, 2)]   # (name, num_epochs, eval_freq, eval_iter)
# one epoch: a run that fails only in the sample printed after its last step has taken every step
STEPS = [("c", 1, 2, 1), ("b", 1, 1, 2)]


@points(13)
def test_train_model_simple_takes_the_books_steps(student, seeds):
    """each batch: zero_grad, calc_loss_batch, backward, step, in training mode: the weights after training match"""
    for name, epochs, freq, it in STEPS:
        plan, model, case = run(student, seeds, name, epochs, freq, it, batches=(5, 2) if name == "c" else (3, 2))
        what = (f"train_model_simple(the grader's GPT, {len(case['train_pairs'])} batches, num_epochs={epochs}, "
                f"eval_freq={freq}, eval_iter={it})")
        after = value(plan, "after", f"the weights after {what}")
        own = style(student, after, model, case)
        _, want = expected(model, case, **own)
        # a call that raised after its last step (printing a sample) took every step: its weights still count
        raised = plan.failed("out")
        for param in ("tok_emb.weight", "pos_emb.weight", "out_head.weight"):
            got = after.get(param)
            if not isinstance(got, torch.Tensor):
                raise AssertionError(f"{what}: the stand-in GPT holds no {param} afterwards")
            if raised is not None and not torch.allclose(got, want[param], atol=1e-5, rtol=1e-4):
                value(plan, "out", what)  # its error is the feedback: no mistake is named on a broken run
            mistakes = {n: (lambda s=s: expected(model, case, **s, **own)[1][param]) for n, s in TRAINING_MISTAKES.items()}
            expect_close(got, want[param], f"{param} after {what}", mistakes, atol=1e-5, rtol=1e-4)


@points(8)
def test_train_model_simple_returns_the_losses_and_tokens_seen(student, seeds):
    """(train_losses, val_losses, track_tokens_seen): one entry per evaluation, after steps 0, eval_freq, ..."""
    for name, epochs, freq, it in CASES:
        plan, model, case = run(student, seeds, name, epochs, freq, it)
        what = f"train_model_simple(..., num_epochs={epochs}, eval_freq={freq}, eval_iter={it})"
        out = value(plan, "out", what)
        own = style(student, plan.values.get("after"), model, case)
        if not (isinstance(out, list) and len(out) == 3 and all(isinstance(v, list) for v in out)):
            raise AssertionError(f"{what}: " + yours_vs_expected(
                yours=repr(out)[:120], yours_are="returned", expected="three lists (train_losses, val_losses, "
                                                                       "track_tokens_seen)"))
        lists, _ = expected(model, case, **own)
        for k, label in enumerate(("train_losses", "val_losses", "track_tokens_seen")):
            got, want = out[k], lists[k]
            if len(got) != len(want):
                raise failure(f"{what}: {label} " + yours_vs_expected(yours=len(got), yours_are="has",
                                                                      expected=f"{len(want)} entries") + ".",
                              _named(model, case, k, got, own))
            if not all(isinstance(v, (int, float)) or (isinstance(v, torch.Tensor) and v.numel() == 1) for v in got):
                raise AssertionError(f"{what}: {label} holds {repr(got)[:100]}, not numbers")
            got_t = torch.tensor([float(v) for v in got], dtype=torch.float64)
            expect_close(got_t, torch.tensor(want, dtype=torch.float64), f"{label} of {what}",
                         {n: (lambda s=s: torch.tensor(expected(model, case, **s, **own)[0][k], dtype=torch.float64))
                          for n, s in {**TOKENS_MISTAKES, **TRAINING_MISTAKES}.items()}, atol=1e-5, rtol=1e-4)


def _named(model, case, k, got, own):
    """The mistake whose lists have ``got``'s length, where one does."""
    for name, switches in TOKENS_MISTAKES.items():
        if len(expected(model, case, **switches, **own)[0][k]) == len(got):
            return name
    return None


@points(6)
def test_evaluate_model(student, seeds):
    """evaluate_model: both losses over eval_iter batches in eval mode (no dropout), the model in training mode after"""
    weights = tiny_weights(CFG, seeds("model"))
    train_pairs = token_batches(3, 2, 5, CFG["vocab_size"], seeds("train"))
    val_pairs = token_batches(3, 3, 4, CFG["vocab_size"], seeds("val"))
    probe = token_batches(1, 2, 5, CFG["vocab_size"], seeds("probe"))[0][0]
    plan = student.plan([tiny_step("m", CFG, weights, train=True),
                         {"let": "out", "call": "training.evaluate_model",
                          "args": [{"$ref": "m"}, as_loader(train_pairs), as_loader(val_pairs), "cpu", 2], "grad": True,
                          "seed": seeds("dropout"), "return": True, "replace": STAND_INS},
                         # the witness of the mode it left: dropout draws after this seed only in training mode
                         {"let": "next", "call": "m", "args": [probe], "seed": seeds("witness"), "return": True}],
                        needs="training.evaluate_model")
    model = tiny(CFG, weights)
    want = [stand_in_loss_loader(pairs, model, "cpu", 2) for pairs in (train_pairs, val_pairs)]
    set_seed(seeds("dropout"))   # the same losses with dropout on, drawn as the child draws them
    in_training = [stand_in_loss_loader(pairs, model.train(), "cpu", 2) for pairs in (train_pairs, val_pairs)]
    what = "evaluate_model(the grader's GPT with dropout 0.3, train_loader, val_loader, 'cpu', eval_iter=2)"
    out = value(plan, "out", what)
    if not (isinstance(out, list) and len(out) == 2 and all(isinstance(v, (int, float)) for v in out)):
        raise AssertionError(f"{what}: " + yours_vs_expected(yours=repr(out)[:100], yours_are="returned",
                                                              expected="(train_loss, val_loss), two floats"))
    expect_close(torch.tensor(out, dtype=torch.float64), torch.tensor(want, dtype=torch.float64), what, {
        "the losses evaluated in training mode (model.eval() before evaluating: no dropout)":
            torch.tensor(in_training, dtype=torch.float64)}, atol=1e-5, rtol=1e-4)
    _check_training_mode(plan, model, probe, seeds("witness"), "evaluate_model")


def _check_training_mode(plan, model, probe, seed, fn):
    """The stand-in GPT's answer after ``fn`` is the training mode's (dropout after ``seed``)."""
    set_seed(seed)
    with torch.no_grad():
        want_train = model.train()(probe)
        want_eval = model.eval()(probe)
    got = value(plan, "next", f"the model's answer after {fn}")
    if isinstance(got, torch.Tensor) and got.shape == want_eval.shape and torch.allclose(got, want_eval, atol=1e-5):
        raise failure(f"after {fn}, the model answers without dropout: it was left in eval mode.",
                      NOT_TRAIN_AFTER.format(fn=fn))
    expect_close(got, want_train, f"the model's answer after {fn} (in training mode, dropout after a seed)")


@points(3)
def test_generate_and_print_sample(student, seeds):
    """generate_and_print_sample prints the greedy text on one line, in eval mode, and leaves the model training"""
    weights = tiny_weights(CFG, seeds("model"))
    probe = token_batches(1, 2, 5, CFG["vocab_size"], seeds("probe"))[0][0]
    plan = student.plan([tokenizer_step("text_tokens"), tiny_step("m", CFG, weights, train=True),
                         {"let": "out", "call": "training.generate_and_print_sample",
                          "args": [{"$ref": "m"}, {"$ref": "tk"}, "cpu", "A"], "printed": True, "replace": STAND_INS},
                         {"let": "next", "call": "m", "args": [probe], "seed": seeds("witness"), "return": True}],
                        needs="training.generate_and_print_sample")
    what = "generate_and_print_sample(the grader's GPT, tokenizer, 'cpu', 'A')"
    ran(plan, "out", what)
    model = tiny(CFG, weights)
    _check_training_mode(plan, model, probe, seeds("witness"), "generate_and_print_sample")
    # what generate_text_simple gives is the grader's stand-in's (greedy), in the child as here
    want = stand_in_generate(model.eval(), torch.tensor([gpt2().encode("A")]), 50, CFG["context_length"])
    text = gpt2().decode(want[0].tolist()).replace("\n", " ") + "\n"
    printed = plan.printed["out"]
    if printed != text:
        raise AssertionError(f"{what} printed " + yours_vs_expected(
            yours=repr(printed[:160]), expected=repr(text[:160]) + " (the 50 new tokens after 'A', greedily, in eval "
                                                                    "mode, on one line)"))
