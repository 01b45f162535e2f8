"""Hidden checks for section 4.5, the transformer block (20 points).

The block runs with the grader's linear maps in place of att, ff, norm1 and norm2 (the plan's
stand_in; the reference gets the same maps), so what is judged here is the block's own wiring:
pre-LayerNorm, two shortcuts, dropout on both branches. The attention's arguments are judged by
what the block's attention answers with the grader's weights, against the book's answer or that of
the chapter-3 mistake the student's own MultiHeadAttention makes, both computed here; the creation
order against the student's own classes' draws."""
import re

import pytest
import torch
import torch.nn.functional as F

from _gpt import (KEEP, BLOCK_MISTAKES, BLOCK_PIECES, CFGS, as_dict, attention_answers, attention_weights, block_forward,
                  block_mistakes, built, close, gradient_steps, judge_gradients, live_tensor, named_parameters_steps, params,
                  pieces_of, run, stand_ins, swapped, with_grads)
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
    return {"let": let, "call": TB, "args": [cfg], "stand_in": spec, "params_keep": KEEP, "params": params(module), "train": train}


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
        emb, ctx = cfg["emb_dim"], cfg["context_length"]
        args = [emb, emb, ctx, cfg["drop_rate"], cfg["n_heads"], cfg["qkv_bias"]]
        plan = student.plan([{"let": "blk", "call": TB, "args": [cfg], "seed": seeds(f"block{i}")},
                             {"let": "names", "grads": "blk", "return": True},
                             *[{"let": f"kind_{piece}", "attr": f"blk.{piece}.__class__.__name__", "return": True}
                               for piece in PIECES],
                             *named_parameters_steps("att", "blk.att"),
                             {"let": "own", "call": "multihead_attention.MultiHeadAttention", "args": args},
                             *named_parameters_steps("own_state", "own")], needs=TB)
        kinds = {piece: plan.values[f"kind_{piece}"] for piece in PIECES}
        if kinds != PIECES:
            raise AssertionError(f"{what}'s pieces: " + yours_vs_expected(
                yours=kinds, yours_are="are", expected=f"{PIECES} (your own classes)"))
        # the block's own parameters: none besides its pieces' (what they hold is judged in their parts)
        own = sorted(n for n in plan.values["names"] if not n.startswith(tuple(f"{p}." for p in PIECES)))
        if own:
            raise AssertionError(f"{what} has the parameters {own} besides those of att, ff, norm1 and norm2; the "
                                 "book's block has no others")
        att = as_dict(plan.values["att"], "blk.att")
        # The block's attention holds what your class, built with the book's arguments, holds
        book = None if plan.failed("own_state") else sorted(as_dict(plan.values["own_state"], "MultiHeadAttention"))
        if book is not None and sorted(att) != book:
            differ = set(att) ^ set(book)
            bias = all(re.search(r"^W_(query|key|value)\.bias$", n) for n in differ)
            raise failure(f"{what}.att is not built with the book's arguments: " + yours_vs_expected(
                yours=sorted(att), expected=book, yours_are="the block's attention has the parameters",
                expected_are=f"your MultiHeadAttention({', '.join(map(str, args))}) has") + ".",
                QKV_NOT_PASSED if bias else None)
        # The block's attention with the grader's weights (for the parameters it holds) on the whole
        # context, in training mode after a seed: its answer must be the one computed here, the book's
        # attention with the book's arguments, or that made with the chapter-3 mistake your own
        # MultiHeadAttention(book's arguments) makes with the same weights (chapter 3's business).
        # What the child answers is never the truth: a block and its own class that agree earn nothing.
        # the names of the parameters it holds (the book's, or a chapter-3 mistake's: a bias more or less)
        # choose which of the grader's weights are copied in; every expected answer is computed here
        weights = attention_weights(att, emb, seeds(f"weights{i}"))
        if weights is None:
            raise AssertionError(f"{what}.att has the parameters {sorted(att)}: the grader can judge an attention "
                                 "of W_query, W_key, W_value and out_proj (nn.Linear each) only")
        x = seeded(2, ctx, emb, seed=seeds(f"x{i}"))
        load = {"params_keep": KEEP, "params": weights, "train": True}
        plan = student.plan([{"let": "blk", "call": TB, "args": [cfg], "seed": seeds(f"block{i}")},
                             {"let": "mine", "call": "blk.att", "args": [x], "seed": 9, "return": True, **load},
                             {"let": "own", "call": "multihead_attention.MultiHeadAttention", "args": args, **load},
                             {"let": "theirs", "call": "own", "args": [x], "seed": 9, "return": True}], needs=TB)
        expected = attention_answers(x, weights, cfg["n_heads"], cfg["drop_rate"], 9)  # the grader's, every one
        # which of them your own class gives: the book's, or a chapter-3 mistake (it selects the answer
        # the block's attention is held to; it is never itself the answer)
        own = None if plan.failed("theirs") else plan.values["theirs"]
        own_fits = [name for name, answer in expected.items() if own is not None and close(own, answer)]
        mine = plan.values["mine"]
        fits = [name for name in dict.fromkeys([None, *own_fits]) if close(mine, expected[name])]
        if fits:
            if None not in fits:
                student.notes.append(f"{what}.att was judged with the mistake your MultiHeadAttention makes on its own "
                                     f"({' or '.join(fits)}): that is chapter 3's, not charged here.")
            continue
        yours = f"your own MultiHeadAttention({', '.join(map(str, args))})"
        if own is None:
            why = f"; {yours} fails on its own ({plan.failed('theirs')}), so the block cannot be judged through it"
        elif not own_fits:
            why = (f"; {yours} gives neither the book's answer nor one of a chapter-3 mistake the grader can compute, "
                   "so the block cannot be judged through it")
        else:
            why = ""
        raise failure(f"{what}.att in training mode (the grader's weights, the whole context, a seed) differs from "
                      "MultiHeadAttention built with d_in=d_out=emb_dim, context_length, dropout=drop_rate, "
                      f"num_heads=n_heads, qkv_bias from cfg{why}.", argument_not_passed(student, cfg, 770 + i, args))


def argument_not_passed(student, cfg, seed, args):
    """The mistake of building the block's attention with one argument other than cfg's, read from
    the attributes it keeps beside your own MultiHeadAttention built with the book's arguments;
    None where they cannot be read or more than one differs."""
    steps = [{"let": "blk", "call": TB, "args": [cfg], "seed": seed},
             {"let": "own", "call": "multihead_attention.MultiHeadAttention", "args": args}]
    for k, attr in enumerate(BOOK_ATTRS):
        steps += [{"let": f"mine{k}", "attr": f"blk.att.{attr}", "return": True},
                  {"let": f"book{k}", "attr": f"own.{attr}", "return": True}]
    plan = student.plan(steps, needs=TB)
    differ = []
    for k, (attr, key) in enumerate(BOOK_ATTRS.items()):
        if plan.failed(f"mine{k}") or plan.failed(f"book{k}"):
            return None
        mine, book = plan.values[f"mine{k}"], plan.values[f"book{k}"]
        if type(mine) not in (int, float) or type(book) not in (int, float):
            return None
        if mine != book:
            differ.append((attr.split(".")[0], key))
    if len(differ) != 1:
        return None
    (attr, key), = differ
    return f"the block's attention built with another {attr} than cfg['{key}']"


@points(3)
def test_block_seeded_init(student):
    """att created first, then ff (FeedForward(cfg)) and the two LayerNorms: your classes' draws after the seed"""
    cfg = CFGS[0]
    emb = cfg["emb_dim"]
    args = [emb, emb, cfg["context_length"], cfg["drop_rate"], cfg["n_heads"], cfg["qkv_bias"]]
    plan = student.plan([{"let": "blk", "call": TB, "args": [cfg], "seed": 123},
                         *named_parameters_steps("state", "blk"),
                         {"let": "att", "call": "multihead_attention.MultiHeadAttention", "args": args, "seed": 123},
                         {"let": "ff", "call": "feed_forward.FeedForward", "args": [cfg]},
                         *named_parameters_steps("ff_state", "ff"),
                         {"let": "ff_first", "call": "feed_forward.FeedForward", "args": [cfg], "seed": 123},
                         *named_parameters_steps("ff_first_state", "ff_first")], needs=TB)
    mine = {k: v for k, v in as_dict(plan.values["state"], "TransformerBlock").items() if k.startswith("ff.")}
    expected = {f"ff.{k}": v for k, v in as_dict(plan.values["ff_state"], "FeedForward").items()}
    if sorted(mine) != sorted(expected):
        raise AssertionError(f"TransformerBlock's ff has parameters {sorted(mine)}; FeedForward(cfg) has {sorted(expected)}")
    if all(torch.equal(mine[k], v) for k, v in expected.items()):
        return
    first = {f"ff.{k}": v for k, v in as_dict(plan.values["ff_first_state"], "FeedForward").items()}
    raise failure("TransformerBlock's ff after torch.manual_seed(123) is not what your FeedForward(cfg) draws "
                  "right after your MultiHeadAttention: create att first, then ff.",
                  "ff created before att (the book creates att, ff, norm1, norm2)"
                  if all(torch.equal(mine[k], v) for k, v in first.items()) else None)


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
