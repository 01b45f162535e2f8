"""Hidden checks for section 4.5, the transformer block (20 points).

The block runs with the grader's linear maps in place of att, ff, norm1 and norm2 (the plan's
stand_in; the reference gets the same maps), so what is judged here is the block's own wiring:
pre-LayerNorm, two shortcuts, dropout on both branches. The attention's arguments are judged by
what the block's attention answers with the grader's weights, against the book's answer or that of
the chapter-3 mistake the student's own MultiHeadAttention makes, both computed here; the creation
order against the student's own classes' draws."""

import pytest
import torch
import torch.nn.functional as F

from _gpt import (BUILT_FROM, built_on, calls_to, drawn_pieces, on_stand_ins, KEEP, BLOCK_MISTAKES, BLOCK_PIECES, CFGS, as_dict, block_forward,
                  block_mistakes, built, gradient_steps, judge_gradients, live_tensor, named_parameters_steps, params,
                  pieces_of, run, stand_ins, swapped, with_grads)
from autograder.grading.kit import call_text, differing
from autograder.grading.probes import calls_made
from autograder.grading.compare import expect_close, seeded, yours_vs_expected
from autograder.grading.result import failure

points = pytest.mark.points
TB = "transformer_block.TransformerBlock"
QKV_NOT_PASSED = "the attention built without cfg['qkv_bias'] (pass it on: MultiHeadAttention(..., qkv_bias=cfg['qkv_bias']))"
PIECES = {"att": "MultiHeadAttention", "ff": "FeedForward", "norm1": "LayerNorm", "norm2": "LayerNorm"}
# What the book's MultiHeadAttention keeps of its arguments, and the key of cfg each comes from
BOOK_ATTRS = {"d_out": "emb_dim", "num_heads": "n_heads", "dropout.p": "drop_rate"}


def block_case(ref, cfg, seed):
    """The reference block built after ``seed`` with stand-ins, and the stand-ins."""
    spec = stand_ins(BLOCK_PIECES, cfg["emb_dim"], seed + 1)
    return swapped(built(ref.transformer_block.TransformerBlock, cfg, seed), spec), spec


def block_step(let, cfg, module, spec, train=False):
    return {"let": let, "call": TB, "args": [cfg], **on_stand_ins(spec), "params_keep": KEEP, "params": params(module),
            "train": train}


@points(6)
def test_block_forward(student, ref, seeds):
    """pre-LayerNorm: x + att(norm1(x)), then + ff(norm2(.)); several sizes, inputs shorter than the context"""
    cases = [(CFGS[0], (2, 5)), (CFGS[1], (3, 10)), (CFGS[2], (1, 3)), ({**CFGS[0], "drop_rate": 0.3}, (2, 4))]

    def check():
        steps, expected = [], []
        for i, (cfg, (b, n)) in enumerate(cases):
            module, spec = block_case(ref, cfg, seeds(f"module{i}"))
            x = seeded(b, n, cfg["emb_dim"], seed=seeds(f"x{i}"))
            steps += [block_step(f"blk{i}", cfg, module, spec),
                      {"let": f"out{i}", "call": f"blk{i}", "args": [x], "seed": 3, "return": True}]
            expected.append((x, run(module, x), spec, cfg))
        plan = student.plan(steps, needs=TB)
        for i, (x, want, spec, cfg) in enumerate(expected):
            what = (f"TransformerBlock(emb_dim={cfg['emb_dim']}, drop_rate={cfg['drop_rate']}) in eval mode on input "
                    f"{tuple(x.shape)} (att, ff, norm1, norm2 replaced by the grader's linear maps)")
            expect_close(plan.values[f"out{i}"], want, what,
                         block_mistakes(x, pieces_of(spec), drop=cfg["drop_rate"], seed=3))
    check()


@points(4)
def test_block_dropout(student, ref, seeds):
    """in training mode, dropout(drop_rate) after the attention and after the feed forward, before each shortcut"""
    cfg = {**CFGS[0], "drop_rate": 0.5}

    def check():
        module, spec = block_case(ref, cfg, seeds("module"))
        x = seeded(2, 6, cfg["emb_dim"], seed=seeds("x"))
        plan = student.plan([block_step("blk", cfg, module, spec, train=True),
                             {"let": "out", "call": "blk", "args": [x], "seed": 123, "return": True}], needs=TB)
        expect_close(plan.values["out"], run(module, x, train=True, seed=123),
                     "TransformerBlock(drop_rate=0.5) in training mode after torch.manual_seed(123) (stand-ins for "
                     "att, ff and the norms: only the shortcut dropout draws)",
                     block_mistakes(x, pieces_of(spec), drop=0.5, seed=123, train=True))
    check()


@points(4)
def test_block_structure_and_attention_arguments(student, ref, seeds):
    """att is your MultiHeadAttention(emb_dim, emb_dim, context_length, drop_rate, n_heads, qkv_bias); ff, norm1, norm2"""
    for i, cfg in enumerate([{**CFGS[1], "drop_rate": 0.2}, {**CFGS[0], "drop_rate": 0.1}]):
        what = f"TransformerBlock({cfg})"
        emb = cfg["emb_dim"]
        # built on the grader's stand-ins for the classes it calls, which record what they are given:
        # the block's own choices are judged here, whatever those classes do (their parts judge them)
        inject = drawn_pieces(emb)
        plan = student.plan([{"let": "blk", "call": TB, "args": [cfg], "seed": seeds(f"block{i}"), "inject": inject},
                             *named_parameters_steps("state", "blk")], needs=TB)
        mine = as_dict(plan.values["state"], "TransformerBlock")
        made = {piece: calls_to(plan, "blk", BUILT_FROM[piece], ref) for piece in ("att", "ff", "norm1")}
        counts = {PIECES[piece]: len(calls) for piece, calls in made.items()}
        if counts != BOOK_COUNTS:
            raise AssertionError(f"{what} builds " + yours_vs_expected(
                yours=counts, yours_are="these pieces", expected=BOOK_COUNTS, expected_are="the book's block builds")
                + ": att = MultiHeadAttention(...), ff = FeedForward(cfg), norm1 and norm2 = LayerNorm(emb_dim).")
        wanted = {"d_in": emb, "d_out": emb, "context_length": cfg["context_length"], "dropout": cfg["drop_rate"],
                  "num_heads": cfg["n_heads"], "qkv_bias": cfg["qkv_bias"]}
        (given,) = made["att"]
        differ = differing(given, wanted)
        if differ:
            raise failure(f"{what} builds its attention as {call_text('MultiHeadAttention', given, wanted)}; the "
                          f"book's is {call_text('MultiHeadAttention', wanted, wanted)}.", argument_not_passed(differ))
        for piece, arg, value, book in (("ff", "cfg", cfg, "FeedForward(cfg)"), ("norm1", "emb_dim", emb, "LayerNorm(emb_dim)")):
            if any(given is None or given.get(arg) != value for given in made[piece]):
                raise AssertionError(f"{what} builds {PIECES[piece]} with other arguments than the book's {book}.")
        book = built_on(ref, ref.transformer_block.TransformerBlock, cfg, seeds(f"block{i}"), inject)
        if sorted(mine) != sorted(params(book)):
            raise AssertionError(f"{what}, built on the grader's stand-ins for its pieces: " + yours_vs_expected(
                yours=sorted(mine), yours_are="has the parameters", expected=sorted(params(book)),
                expected_are="the book's block has") + " (att, ff, norm1, norm2 and no parameters of its own).")


# how many of each piece the book's block builds, and the key of cfg each argument of its attention comes from
BOOK_COUNTS = {"MultiHeadAttention": 1, "FeedForward": 1, "LayerNorm": 2}
CFG_KEYS = {"d_in": "emb_dim", "d_out": "emb_dim", "context_length": "context_length", "dropout": "drop_rate",
            "num_heads": "n_heads"}


def argument_not_passed(differ):
    """The mistake of building the block's attention with one argument other than cfg's, or None."""
    if len(differ) != 1:
        return None
    (key,) = differ
    return QKV_NOT_PASSED if key == "qkv_bias" else f"the block's attention built with another {key} than cfg['{CFG_KEYS[key]}']"


@points(3)
def test_block_seeded_init(student, ref):
    """att created first, then ff (FeedForward(cfg)) and the two LayerNorms: the draws after the seed"""
    cfg = CFGS[0]
    inject = drawn_pieces(cfg["emb_dim"])
    plan = student.plan([{"let": "blk", "call": TB, "args": [cfg], "seed": 123, "inject": inject},
                         *named_parameters_steps("state", "blk")], needs=TB)
    mine = as_dict(plan.values["state"], "TransformerBlock")
    book = params(built_on(ref, ref.transformer_block.TransformerBlock, cfg, 123, inject))
    if sorted(mine) == sorted(book) and all(torch.equal(mine[k], v) for k, v in book.items()):
        return
    order = [name for name, _ in calls_made(plan, "blk", ref)]
    ff_first = order[:2] == [BUILT_FROM["ff"], BUILT_FROM["att"]]
    raise failure("TransformerBlock after torch.manual_seed(123), built on stand-ins for its pieces that draw as "
                  "torch's nn.Linear draws, differs from the book's block built the same way: create att first, then "
                  "ff, then norm1 and norm2, and nothing else random.",
                  "ff created before att (the book creates att, ff, norm1, norm2)" if ff_first else None)


@points(3)
def test_block_trainable(student, ref, seeds):
    """every parameter gets the reference's gradient through both branches; the caller's input is left unchanged"""
    cfg = CFGS[1]
    module, spec = block_case(ref, cfg, seeds("module"))
    x, g = seeded(2, 5, 8, seed=seeds("x")), seeded(2, 5, 8, seed=seeds("g"))

    def wired(variant):
        def forward(w):
            pieces = {k: (lambda t, k=k: F.linear(t, w[f"{k}.weight"], w[f"{k}.bias"])) for k in BLOCK_PIECES}
            return block_forward(x, pieces, variant=variant)
        return with_grads(params(module), forward, g)
    # the book's gradients, or those of the wiring mistake the output shows (each computed here)
    models = {None: lambda: run(module, x, grad_weight=g),
              **{name: (lambda v=variant: wired(v)) for name, variant in BLOCK_MISTAKES.items()}}
    plan = student.plan([block_step("blk", cfg, module, spec), live_tensor("x", "blk.att.weight", x),
                         *gradient_steps("blk", "x", g)], needs=TB)
    judge_gradients(plan, "x", x, params(module), models,
                    in_place="TransformerBlock changed the caller's input in place: forward must leave x as it was "
                             "(x = x + ..., not x += ...)",
                    no_gradient="TransformerBlock: {} received no gradient from backward",
                    what="TransformerBlock (stand-ins for att, ff, norms) on input (2, 5, 8)",
                    gradient_of="gradient of TransformerBlock's {} (stand-ins for att, ff, norms)")
